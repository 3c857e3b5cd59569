"""Input handling shared by the Sort & Search modules: binary matrices of any supported kind (numpy, ResponseMatrix,
DataFrame with item columns, bit-packed, Dask), their sums, and item ids."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._shared import _plain
from .._shared import _value_list as _list_ids
from .._outputs import _check_position_ids, _some
from .._validation import (check_array, check_binary, check_positive_int, check_unit_interval, frame_values,
                           is_zero_one, masked_as_nan)
from ..bitpack import PackedBinaryMatrix
from ..responses import ResponseMatrix


def _is_dask(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "dask"


def _frame_values(df: pd.DataFrame, name: str) -> np.ndarray:
    """0/1 values of a DataFrame (models × item columns) as a bool array; NaN or other values are refused by name."""
    try:
        v = np.asarray(frame_values(df), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a DataFrame of 0/1 values (models × item columns): {exc}") from None
    return check_binary(v, name, ndim=2)


def _binary(x: Any, name: str) -> Any:
    """A bool ndarray, a PackedBinaryMatrix or a (lazily checked) 2-D Dask array."""
    if isinstance(x, ResponseMatrix):
        return x.require_binary(name)
    if isinstance(x, pd.DataFrame):
        return _frame_values(x, name)
    if isinstance(x, PackedBinaryMatrix):
        return x
    if _is_dask(x):
        if x.ndim != 2 or 0 in x.shape:
            raise ValueError(f"{name}: expected a non-empty 2-D array, got shape {x.shape}")
        return x
    return check_binary(x, name, ndim=2)


def _ids(x: Any, axis: int) -> pd.Index | None:
    """Item (axis 1) or model (axis 0) ids of a labelled input, None for arrays."""
    if isinstance(x, ResponseMatrix):
        return x.item_ids if axis == 1 else x.model_ids
    if isinstance(x, pd.DataFrame):
        return x.columns if axis == 1 else x.index
    return None


def check_unique_ids(ids: pd.Index | None, what: str = "item", arg: str = "responses") -> None:
    """Refuse labels (item or model ``ids`` of a fitted input; None for arrays) of which one repeats: the
    estimators match items by id, and a repeated id would match two columns. The one check of every estimator that
    fits on labelled responses (SortSearch and those built on it, IRT2PL).

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats.sortsearch._inputs import check_unique_ids
    >>> check_unique_ids(pd.Index(["q0", "q1", "q0"]))
    Traceback (most recent call last):
    ...
    ValueError: responses: duplicated item ids ['q0']; items are matched by id, so every id must be unique
    """
    if ids is not None and ids.has_duplicates:
        raise ValueError(f"{arg}: duplicated {what} ids {_list_ids(ids[ids.duplicated()].unique())}; {what}s are "
                         "matched by id, so every id must be unique")


def check_answered(missing: np.ndarray, axis: int = 0, arg: str = "responses") -> None:
    """Refuse models (``axis`` 0, rows) or items (1, columns) that have no response: every cell of theirs
    ``missing`` (a bool mask of the matrix). Nothing is known of them to order or copy from.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch._inputs import check_answered
    >>> check_answered(np.array([[False, True], [True, True]]))
    Traceback (most recent call last):
    ...
    ValueError: responses: models at positions [1] have no response (all NaN); drop them
    """
    empty = np.asarray(missing, bool).all(axis=1 - axis)
    if empty.any():
        raise ValueError(f"{arg}: {'models' if axis == 0 else 'items'} at positions {_list_ids(np.flatnonzero(empty))} "
                         "have no response (all NaN); drop them")


def _dask_checked_sum(x: Any, axis: int, name: str) -> np.ndarray:
    """Sum of a Dask array along ``axis`` and the 0/1 check in one pass over the chunks."""
    import dask

    bad = ((x != 0) & (x != 1)).any()
    s, b = dask.compute(x.sum(axis=axis), bad)
    if b:
        raise ValueError(f"{name}: expected binary 0/1 values (found others or NaN)")
    return np.asarray(s, dtype=np.int64)


def item_sums(responses: Any, *, name: str = "responses") -> np.ndarray:
    """Number of models answering each item correctly: the key of Sorting by Sum.

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
        0/1 (or bool) correctness; a packed matrix is summed on its bytes, a Dask array chunk by chunk.
    name : str, default="responses"
        The argument's name in error messages.

    Returns
    -------
    sums : ndarray of shape (n_items,), int64

    See Also
    --------
    effstats.sortsearch.model_sums : the same per model.
    effstats.sortsearch.sort_by_sum : the items ordered by these sums.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch import item_sums
    >>> item_sums(np.array([[1, 0, 1], [1, 1, 0]]))
    array([2, 1, 1])
    """
    return _binary_sums(responses, 0, name)


def model_sums(responses: Any, *, name: str = "responses") -> np.ndarray:
    """Number of items each model answers correctly.

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
        0/1 (or bool) correctness.
    name : str, default="responses"
        The argument's name in error messages.

    Returns
    -------
    sums : ndarray of shape (n_models,), int64

    See Also
    --------
    effstats.sortsearch.item_sums : the same per item.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch import model_sums
    >>> model_sums(np.array([[1, 0, 1], [1, 1, 0]]))
    array([2, 2])
    """
    return _binary_sums(responses, 1, name)


def _binary_sums(responses: Any, axis: int, name: str) -> np.ndarray:
    a = _binary(responses, name)
    if isinstance(a, PackedBinaryMatrix):
        return a.col_sums() if axis == 0 else a.row_sums()
    if _is_dask(a):
        return _dask_checked_sum(a, axis, name)
    return a.sum(axis=axis, dtype=np.int64)


def _refuse_graded(rm: ResponseMatrix, name: str) -> None:
    """Sort & Search orders items by who answers them: graded scores (kind="score") get one error naming the cause."""
    if rm.kind != "binary":
        raise ValueError(f"{name}: Sort & Search needs 0/1 results (kind='binary'), got graded scores "
                         f"(kind={rm.kind!r}); binarise them first (AlpacaEval: load_alpacaeval(outcome='win')), or "
                         "estimate graded scores with effstats.disco.StratifiedAIPW")


def _observed_sums(rm: ResponseMatrix, axis: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(correct counts, observed counts) along ``axis`` of a binary ResponseMatrix with missing cells."""
    _refuse_graded(rm, name)
    obs = rm.observed
    vals = np.asarray(rm.values, bool) & obs
    return vals.sum(axis=axis, dtype=np.int64), obs.sum(axis=axis, dtype=np.int64)


def _confidences(x: Any, name: str) -> Any:
    if isinstance(x, ResponseMatrix):
        try:
            return x.true_class_probability()
        except ValueError as exc:  # name the caller's argument, not the ResponseMatrix internals
            raise ValueError(f"{name}: sort='confidence' needs a ResponseMatrix with class probabilities ({exc}); "
                             "use sort='sum' for 0/1 correctness") from None
    if _is_dask(x):
        return x
    if isinstance(x, PackedBinaryMatrix):
        raise ValueError(f"{name}: sort='confidence' needs true-class probabilities in [0, 1], got a packed 0/1 "
                         "matrix; "
                         "use sort='sum' for 0/1 correctness")
    c = check_unit_interval(x, name, ndim=2)
    if c.dtype == bool or is_zero_one(c):
        raise ValueError(f"{name}: sort='confidence' needs true-class probabilities in [0, 1]; got only 0/1 values "
                         "(correctness, not confidences): use sort='sum', or pass a ResponseMatrix with probabilities")
    return c


def _confidence_sums(x: Any, axis: int, name: str) -> np.ndarray:
    c = _confidences(x, name)
    if _is_dask(c):
        import dask

        s, lo, hi, nan, frac = dask.compute(c.sum(axis=axis), c.min(), c.max(), np.isnan(c).any(),
                                            ((c != 0) & (c != 1)).any())
        if nan or lo < 0 or hi > 1:
            raise ValueError(f"{name}: expected true-class probabilities in [0, 1] without NaN")
        if not frac:
            raise ValueError(f"{name}: sort='confidence' needs true-class probabilities; got only 0/1 values: use "
                             "sort='sum'")
        return np.asarray(s, float)
    return c.sum(axis=axis)


def _check_int_in(x: Any, name: str, low: int, high: int) -> int:
    """``x`` as an int in [low, high]: one message, stating that range, whatever is wrong with the value (a float or
    a bool included, which ``check_positive_int`` reports with its lower bound only)."""
    if isinstance(x, np.ndarray) and x.ndim == 0:  # np.array(10), as check_positive_int takes it
        x = x[()]
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name}: expected an integer in [{low}, {high}], got {_plain(x)!r}")
    return check_positive_int(x, name, minimum=low, maximum=high)


def _check_budget(budget: Any, n: int, name: str = "budget") -> int:
    """``budget`` as an int in [1, n]."""
    return _check_int_in(budget, name, 1, n)


def _item_indices(items: Any, selected: np.ndarray | None, n_items: int,
                  item_ids: pd.Index | None = None) -> np.ndarray:
    """Validated item positions (n_sel,): ``items`` (ids when the estimator knows ids, or positions), or the last
    selection when None."""
    if items is None:
        if selected is None:
            raise ValueError("items: no selection yet; call select(budget) or pass items")
        return selected
    if isinstance(items, pd.Index):
        items = items.to_numpy()
    if item_ids is not None:
        it = np.asarray(items)
        if it.ndim != 1 or it.size == 0:
            raise ValueError(f"items: expected a non-empty 1-D sequence of item ids or indices, got shape {it.shape}")
    else:
        it = check_array(items, "items", ndim=1, dtype=None)
    if item_ids is not None:
        pos = item_ids.get_indexer(it)
        if (pos >= 0).all():
            return pos.astype(np.int64)
        ids_are_ints = pd.api.types.is_integer_dtype(item_ids.dtype)
        if ids_are_ints or not np.issubdtype(it.dtype, np.integer):
            raise ValueError(f"items: ids not among the fitted items: {_list_ids(it[pos < 0])}")
        # integer positions into an estimator fitted on non-integer ids: unambiguous
    if not np.issubdtype(it.dtype, np.integer) or it.min() < 0 or it.max() >= n_items:
        raise ValueError(f"items: expected integer item indices in [0, {n_items - 1}]")
    return it.astype(np.int64)


def _split_missing(responses: Any) -> tuple[Any, np.ndarray | None]:
    """(responses with missing cells (a ResponseMatrix's mask, NaN, masked) set to 0, their mask or None when
    complete)."""
    responses = masked_as_nan(responses)
    if isinstance(responses, ResponseMatrix):
        if responses.missing is None or not responses.missing.any():
            return responses, None
        miss = responses.missing
        vals = np.where(miss, 0.0, responses.values)
        return pd.DataFrame(vals, index=responses.model_ids, columns=responses.item_ids), miss
    if isinstance(responses, pd.DataFrame):
        miss = responses.isna().to_numpy()
        if not miss.any():
            return responses, None
        # through floats: a nullable boolean column takes no 0 (and a placeholder must not keep its dtype's NA)
        try:
            filled = np.where(miss, 0.0, np.asarray(frame_values(responses), dtype=float))
        except (TypeError, ValueError):  # not numbers: _frame_values names them
            return responses.fillna(0), miss
        return pd.DataFrame(filled, index=responses.index, columns=responses.columns), miss
    if isinstance(responses, pd.Series):
        miss = responses.isna().to_numpy()
        return (responses.fillna(0), miss) if miss.any() else (responses, None)
    if _is_dask(responses) or isinstance(responses, PackedBinaryMatrix):
        return responses, None
    try:
        arr = np.asarray(responses)
    except (TypeError, ValueError):  # ragged: check_binary names it
        return responses, None
    if arr.dtype.kind != "f":
        return responses, None
    miss = np.isnan(arr)
    return (np.where(miss, 0.0, arr), miss) if miss.any() else (responses, None)


def _selected_responses(responses: Any, positions: np.ndarray, n_items: int) -> tuple[np.ndarray, bool]:
    """New models' responses on the items at ``positions`` as bool (n_models, n_sel); a 1-D input is one model.

    The columns are the selected items in the order of ``positions``, or all ``n_items`` fitted items (the selected
    columns are taken here). Returns the matrix and whether it was taken from the full width.
    """
    n_sel = len(positions)
    if isinstance(responses, ResponseMatrix):
        responses = responses.require_binary("responses")
    elif isinstance(responses, pd.DataFrame):
        responses = _frame_values(responses, "responses")
    elif isinstance(responses, pd.Series):
        responses = responses.to_numpy()
    if _is_dask(responses):
        # (n_models, budget) on the selected items is small by design: bring only those columns to memory
        if n_sel != n_items and responses.ndim == 2 and responses.shape[1] == n_items:
            return _take_columns(responses, positions, "responses"), True
        responses = responses.compute()
    r = check_binary(responses, "responses", ndim=(1, 2))
    r = r[None, :] if r.ndim == 1 else r
    if n_sel != n_items and r.shape[1] == n_items:
        return r[:, positions], True
    if r.shape[1] != n_sel:
        raise ValueError(f"responses: expected shape (n_models, {n_sel}) for the {n_sel} selected items (columns in "
                         "the order "
                         f"of items; select() gives them in ascending item order) or (n_models, {n_items}) for all "
                         "items, "
                         f"got {tuple(r.shape)}")
    return r, False


def _aligned_responses(responses: Any, positions: np.ndarray, item_ids: pd.Index | None,
                       n_items: int) -> tuple[np.ndarray, pd.Index | None, np.ndarray | None]:
    """Responses on the items at ``positions`` as bool (n_models, n_sel), aligned by id when labelled.

    A ResponseMatrix / DataFrame / Series must carry the selected items as columns (any order; other fitted items
    are ignored); they are reordered to ``positions``. Fitted without ids (``item_ids`` None), integer column labels
    are item positions and other labels are refused. Arrays are positional: columns in the order of ``positions``,
    or all ``n_items`` fitted items. Returns the matrix (0 at missing cells), the model ids (None for arrays) and the
    missing-cell mask (None when complete).
    """
    labelled = isinstance(responses, (ResponseMatrix, pd.DataFrame, pd.Series))
    if not labelled:
        filled, miss = _split_missing(responses)
        r, full = _selected_responses(filled, positions, n_items)
        if miss is not None:
            miss = np.atleast_2d(miss)
            miss = _some(miss[:, positions] if full else miss)
        return r, None, miss
    if isinstance(responses, pd.Series):  # one model: index = item ids
        responses = responses.to_frame().T
    cols = _ids(responses, 1)
    models = _ids(responses, 0)
    _check_position_ids(cols, item_ids, "labelled columns", "responses")
    want = (pd.RangeIndex(n_items) if item_ids is None else item_ids)[positions]
    if cols.has_duplicates:
        raise ValueError(f"responses: duplicated item columns {_list_ids(cols[cols.duplicated()].unique())}")
    missing = want.difference(cols, sort=False)
    if len(missing):
        unseen = cols.difference(want, sort=False)
        parts = [f"missing selected items {_list_ids(missing)}"]
        if len(unseen):
            parts.append(f"unexpected (not selected) items {_list_ids(unseen)}")
        raise ValueError(f"responses: columns must be the {len(want)} selected items in any order (other items are "
                         "ignored); " + "; ".join(parts))
    take = cols.get_indexer(want)
    filled, miss = _split_missing(responses)
    if isinstance(filled, ResponseMatrix):
        r = filled._take(items=take).require_binary("responses")
    else:
        r = _frame_values(filled.iloc[:, take], "responses")
    return r, models, None if miss is None or not miss[:, take].any() else miss[:, take]


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


def _simulate_selection(est: Any, a: Any, budget: Any, model_ids: pd.Index | None = None) -> Any:
    """The ``simulate`` protocol of the per-item predictors on a checked full matrix ``a`` (n_models, n_items):
    ``est.select(budget)``, then ``est.predict`` on those columns (items: the last selection, so item ids that are
    integers are never read as positions), with the new models' ``model_ids`` set on the result."""
    if a.shape[1] != est.n_items_:
        raise ValueError(f"responses: expected {est.n_items_} items (columns), got {a.shape[1]}")
    est.select(budget)
    res = est.predict(_take_columns(a, est.selected_, "responses"), None)
    if model_ids is not None:  # a HybridResult's model ids are those of its Sort & Search result
        object.__setattr__(getattr(res, "search", res), "model_ids", model_ids)
    return res


def _row_blocks(a: Any, name: str, max_cells: int = 2**25):
    """Yield (start, dense bool rows) of a checked ndarray / packed / Dask matrix, ``max_cells`` cells at a time."""
    n_rows, n = a.shape
    step = max(1, max_cells // max(n, 1))
    if isinstance(a, PackedBinaryMatrix):
        yield from a.row_blocks(step)
        return
    for s in range(0, n_rows, step):
        blk = a[s : s + step]
        if _is_dask(blk):
            blk = check_binary(blk.compute(), name)
        yield s, blk


def _sorted_row_blocks(x: Any, order: np.ndarray, name: str, max_cells: int = 2**25):
    """Yield (start, bool rows permuted by ``order``) from an ndarray / ResponseMatrix / packed / Dask matrix."""
    a = _binary(x, name)
    if a.shape[1] != len(order):
        raise ValueError(f"{name}: expected {len(order)} items (columns), got {a.shape[1]}")
    for s, blk in _row_blocks(a, name, max_cells):
        yield s, blk[:, order]


def _align_full(x: Any, item_ids: pd.Index | None, name: str, n_items: int) -> Any:
    """A labelled full matrix (ResponseMatrix / DataFrame) with its columns reordered to the ``n_items`` fitted items
    (by id); arrays unchanged (positional). Fitted without ids (``item_ids`` None), integer column labels are item
    positions and other labels are refused."""
    cols = _ids(x, 1)
    if cols is None:
        return x
    _check_position_ids(cols, item_ids, "labelled columns", name)
    if item_ids is None:
        item_ids = pd.RangeIndex(n_items)
    if cols.equals(item_ids):
        return x
    missing, unseen = item_ids.difference(cols, sort=False), cols.difference(item_ids, sort=False)
    if len(missing) or len(unseen) or cols.has_duplicates:
        parts = [f"missing items {_list_ids(missing)}"] if len(missing) else []
        parts += [f"unseen items {_list_ids(unseen)}"] if len(unseen) else []
        parts += ["duplicated item columns"] if cols.has_duplicates else []
        raise ValueError(f"{name}: columns must be the {len(item_ids)} fitted items (any order); " + "; ".join(parts))
    take = cols.get_indexer(item_ids)
    return x._take(items=take) if isinstance(x, ResponseMatrix) else x.iloc[:, take]


def _check_rows(rows: Any, n_rows: int, ids: pd.Index | None = None) -> np.ndarray:
    """Row selector: integer positions in [-n_rows, n_rows) (1-D or a scalar), a bool mask of length n_rows, or, when
    the models have ids, non-integer model ids (integers are always positions)."""
    r = np.asarray(rows)
    if ids is not None and r.size and r.ndim <= 1 and r.dtype != bool and not np.issubdtype(r.dtype, np.number):
        r1 = np.atleast_1d(r)
        pos = ids.get_indexer(r1)
        if (pos < 0).any():
            raise ValueError(f"rows: model ids not among the results' models: {_list_ids(r1[pos < 0])}")
        return pos.astype(np.int64)
    r = np.asarray(rows)
    if r.dtype == bool:
        if r.shape != (n_rows,):
            raise ValueError(f"rows: a boolean mask needs shape ({n_rows},), got {r.shape}")
        return np.flatnonzero(r)
    if r.size == 0:
        return np.zeros(0, np.int64)
    if r.ndim > 1 or not np.issubdtype(r.dtype, np.integer):
        raise ValueError(f"rows: expected integer model positions (1-D) or a boolean mask, got {r.dtype} with shape "
                         f"{r.shape}")
    r = np.atleast_1d(r)
    if r.min() < -n_rows or r.max() >= n_rows:
        raise ValueError(f"rows: positions must be in [{-n_rows}, {n_rows - 1}], got range [{r.min()}, {r.max()}]")
    return r
