"""Per-item scores and their datasets: the checks every entry point shares, and the score they define.

The score is the unweighted mean of per-dataset means (the seed paper's Eq. 1); :func:`stratified_mean` computes it
with its stratified standard error, and the helpers turn user input (arrays or id-indexed Series, group labels)
into the arrays the evaluator and the ranking work on, with one clear error per bad argument.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._shared import _plain
from .._validation import check_unit_interval

__all__ = ["stratified_mean"]


def _groups(groups: Any, n: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer stratum codes (n,) and the stratum labels."""
    if groups is None:
        return np.zeros(n, dtype=np.intp), np.array(["all"], dtype=object)
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n:
        raise ValueError(f"{name}: expected one group label per item ({n}), got shape {g.shape}")
    if g.dtype.kind == "f" and np.isnan(g).any():
        raise ValueError(f"{name}: missing (NaN) group labels")
    if g.dtype.kind == "O" and pd.isna(g).any():
        raise ValueError(f"{name}: missing (None / NaN) group labels at positions "
                         f"{np.flatnonzero(pd.isna(g))[:5].tolist()}")
    try:
        labels, codes = np.unique(g, return_inverse=True)
    except TypeError:  # labels of types that do not compare (e.g. str and int)
        raise ValueError(f"{name}: group labels must be of one comparable type (all str, or all numbers), got "
                         f"{sorted({type(v).__name__ for v in g})}") from None
    return codes.astype(np.intp), labels


def _item_ids(scores: pd.Series, name: str) -> pd.Index:
    """The Series' index as item ids, refused when it has duplicates."""
    if not scores.index.is_unique:
        raise ValueError(f"{name}: the Series index (item ids) has duplicates")
    return scores.index


def _groups_by_id(groups: pd.Series, ids: pd.Index, name: str) -> pd.Series:
    """Group labels in the order of the item ids ``ids``; every item needs one."""
    missing = ids.difference(groups.index)
    if len(missing):
        raise ValueError(f"{name}: no group for item ids {_plain(missing[:5])}")
    return groups.reindex(ids)


def _scores(x: Any, name: str, ndim: int = 1) -> np.ndarray:
    """check_unit_interval with a message for NaN that fits this API (no missing mask here: drop the items)."""
    try:
        return check_unit_interval(x, name, ndim=ndim)
    except ValueError as e:
        if "NaN" not in str(e):
            raise
        raise ValueError(f"{name}: contains NaN (items not scored); drop those items before the evaluation (for a "
                         "pair, keep the items both models were scored on)") from None


def stratified_mean(scores: Any, groups: Any = None) -> tuple[float, float]:
    r"""One model's unweighted mean of per-group means and its stratified plug-in standard error.

    The score the evaluator estimates (the seed paper's Eq. 1): each dataset counts once, whatever its size. The
    standard error is the stratified one, without the finite-population correction.

    Parameters
    ----------
    scores : array-like of shape (n_items,)
        Per-item scores in [0, 1].
    groups : array-like of shape (n_items,), optional
        Dataset of each item (default: one dataset).

    Returns
    -------
    estimate : float
    standard_error : float

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Estimates this score adaptively.
    effstats.reliability.mean_of_means : The same score for many models at once, without standard errors.

    Notes
    -----
    With :math:`D` datasets, :math:`n_d` items, mean :math:`\bar x_d` and sample variance :math:`s_d^2` in dataset
    :math:`d`,

    .. math::

        \hat\theta = \frac{1}{D} \sum_{d=1}^{D} \bar x_d, \qquad
        \widehat{\mathrm{se}}(\hat\theta) = \frac{1}{D} \sqrt{\sum_{d=1}^{D} \frac{s_d^2}{n_d}}.

    References
    ----------
    Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation with just
    enough data. Manuscript under double-blind review.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import stratified_mean
    >>> scores = np.r_[np.ones(90), np.zeros(10), np.ones(30), np.zeros(70)]  # 90 % and 30 % correct
    >>> est, se = stratified_mean(scores, groups=np.repeat(["a", "b"], 100))
    >>> round(est, 3), round(se, 4)
    (0.6, 0.0274)
    """
    x = _scores(scores, "scores")
    codes, labels = _groups(groups, x.size, "groups")
    n = np.bincount(codes, minlength=labels.size).astype(float)
    m = np.bincount(codes, x, minlength=labels.size) / n
    # squares about each group's mean, not the sum of squares minus n m²: that difference cancels to a tiny negative
    # number where a group's scores are alike, and its square root to NaN
    ss = np.bincount(codes, (x - m[codes]) ** 2, minlength=labels.size)
    v = np.where(n > 1, ss / np.maximum(n - 1, 1), 0.0)
    return float(m.mean()), float(np.sqrt(np.sum(v / n)) / labels.size)
