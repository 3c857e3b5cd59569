"""Correlations between estimated and true accuracies (Spearman and Pearson, with intervals) and between models'
responses. Public path: :mod:`effstats.metrics`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ._results import ConfidenceInterval, check_confidence_level
from ._shared import _id_list
from ._validation import check_array, check_binary, check_option
from .responses import ResponseMatrix

@dataclass(frozen=True)
class CorrelationResult:
    """Spearman and Pearson correlation between estimated and true accuracies, with intervals.

    Returned by :func:`effstats.metrics.accuracy_correlation`. Intervals are Fisher-z intervals (Notes); they
    need at least 4 models (NaN below).

    Attributes
    ----------
    spearman, pearson : float
        The correlations (:func:`scipy.stats.spearmanr`, :func:`scipy.stats.pearsonr`).
    spearman_pvalue, pearson_pvalue : float
        Their two-sided p-values.
    n : int
        Number of models.

    See Also
    --------
    effstats.metrics.accuracy_correlation : computes it.

    Notes
    -----
    The intervals are Fisher-z intervals around the correlation :math:`r` of :math:`n` models,

    .. math::

        \\tanh\\big(\\operatorname{atanh}(r) \\pm z_{1 - \\alpha/2}\\, \\mathrm{se}\\big), \\qquad
        \\mathrm{se} = \\frac{1}{\\sqrt{n - 3}} \\ \\text{(Pearson)}, \\qquad
        \\mathrm{se} = \\sqrt{\\frac{1 + r^2 / 2}{n - 3}} \\ \\text{(Spearman, Bonett \\& Wright 2000)} .

    References
    ----------
    Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small sample.
    *Metron* 1, 3-32.

    Bonett, D. G. and Wright, T. A. (2000). Sample size requirements for estimating Pearson, Kendall and Spearman
    correlations. *Psychometrika* 65(1), 23-28.

    Examples
    --------
    >>> from effstats.metrics import accuracy_correlation
    >>> r = accuracy_correlation([0.61, 0.72, 0.55, 0.90, 0.83], [0.60, 0.75, 0.50, 0.88, 0.85])
    >>> r.to_frame().round(3)
              statistic  pvalue    low   high  n
    method
    spearman      1.000   0.000  1.000  1.000  5
    pearson       0.984   0.002  0.774  0.999  5
    """

    spearman: float
    spearman_pvalue: float
    pearson: float
    pearson_pvalue: float
    n: int

    def _z_se(self, method: str) -> tuple[float, float]:
        method = check_option(method, "method", ("pearson", "spearman"))
        r = self.pearson if method == "pearson" else self.spearman
        if self.n < 4:
            return r, float("nan")
        se = 1.0 / np.sqrt(self.n - 3) if method == "pearson" else np.sqrt((1 + r**2 / 2) / (self.n - 3))
        return r, float(se)

    @property
    def statistic(self) -> float:
        """The Pearson correlation (the result protocol's estimate; Spearman is ``spearman``)."""
        return self.pearson

    @property
    def pvalue(self) -> float:
        """p-value of the Pearson correlation (the one ``statistic`` reports), scipy's name."""
        return self.pearson_pvalue

    @property
    def standard_error(self) -> float:
        """Standard error of ``atanh(pearson)``, ``1 / sqrt(n - 3)`` (the Fisher-z scale the interval is built on)."""
        return self._z_se("pearson")[1]

    def confidence_interval(self, confidence_level: float = 0.95, method: str = "pearson") -> ConfidenceInterval:
        """Fisher-z interval for the Pearson or Spearman correlation.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
        method : {"pearson", "spearman"}, default="pearson"

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high`` floats (NaN with fewer than 4 models).
        """
        level = check_confidence_level(confidence_level)
        r, se = self._z_se(method)
        if not np.isfinite(se):
            return ConfidenceInterval(float("nan"), float("nan"))
        z = stats.norm.ppf(0.5 + level / 2) * se
        zr = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
        return ConfidenceInterval(float(np.tanh(zr - z)), float(np.tanh(zr + z)))

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per correlation: ``statistic``, ``pvalue``, ``low``, ``high`` (Fisher-z interval), ``n``.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95

        Returns
        -------
        DataFrame of shape (2, 5)
            Indexed by ``method`` (``"spearman"``, ``"pearson"``).
        """
        cis = [self.confidence_interval(confidence_level, m) for m in ("spearman", "pearson")]
        return pd.DataFrame({"statistic": [self.spearman, self.pearson],
                             "pvalue": [self.spearman_pvalue, self.pearson_pvalue],
                             "low": [c.low for c in cis], "high": [c.high for c in cis], "n": self.n},
                            index=pd.Index(["spearman", "pearson"], name="method"))


def accuracy_correlation(estimated: Any, true: Any) -> CorrelationResult:
    """Rank (Spearman) and linear (Pearson) correlation of estimated against true accuracies.

    The rank correlation is how Prabhu et al. (App. F) judge whether an estimator orders models correctly.

    Parameters
    ----------
    estimated : array-like of shape (n_models,) or Series
        Estimated accuracies; at least 3 models, not all equal.
    true : array-like of shape (n_models,) or Series
        True accuracies. Two Series are aligned by their index (model ids; a mismatch raises ValueError);
        arrays are positional.

    Returns
    -------
    CorrelationResult

    See Also
    --------
    effstats.metrics.CorrelationResult : the result, with Fisher-z intervals.
    scipy.stats.spearmanr, scipy.stats.pearsonr

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> from effstats.metrics import accuracy_correlation
    >>> r = accuracy_correlation([0.61, 0.72, 0.55, 0.90, 0.83], [0.60, 0.75, 0.50, 0.88, 0.85])
    >>> round(r.spearman, 3), round(r.pearson, 3)
    (1.0, 0.984)
    >>> ci = r.confidence_interval()
    >>> round(ci.low, 3), round(ci.high, 3)
    (0.774, 0.999)
    """
    if isinstance(estimated, pd.Series) and isinstance(true, pd.Series) and not estimated.index.equals(true.index):
        ie, it = estimated.index, true.index
        if ie.has_duplicates or it.has_duplicates or len(ie.difference(it)) or len(it.difference(ie)):
            raise ValueError(f"true: its index (model ids) must hold the ids of estimated, in any order; missing "
                             f"{_id_list(ie.difference(it, sort=False))}, unexpected "
                             f"{_id_list(it.difference(ie, sort=False))}")
        true = true.reindex(ie)
    e = check_array(estimated, "estimated", ndim=1)
    t = check_array(true, "true", ndim=1, shape=(len(e),))
    if len(e) < 3:
        raise ValueError(f"estimated: need at least 3 models, got {len(e)}")
    if np.ptp(e) == 0 or np.ptp(t) == 0:
        raise ValueError("estimated: correlation is undefined when either vector is constant")
    s = stats.spearmanr(e, t)
    p = stats.pearsonr(e, t)
    return CorrelationResult(float(s[0]), float(s[1]), float(p[0]), float(p[1]), len(e))


def model_correlation_matrix(responses: Any, *, sort_by_accuracy: bool = True) -> pd.DataFrame:
    """Correlation between models' per-item correctness, models sorted by accuracy (best first).

    The matrix of Prabhu et al. (App. E, Fig. 7). For binary vectors Spearman's rho equals Pearson's r (the ranks
    of 0/1 data are an affine map of them), so one :func:`numpy.corrcoef` gives the paper's Spearman matrix.

    Parameters
    ----------
    responses : array-like of bool of shape (n_models, n_items), or ResponseMatrix
        Binary correctness of at least 2 models, none constant.
    sort_by_accuracy : bool, default=True
        Order rows and columns by accuracy (best first); ``False`` keeps the input order.

    Returns
    -------
    DataFrame of shape (n_models, n_models)
        Indexed by model id (positions for arrays).

    See Also
    --------
    effstats.metrics.accuracy_correlation : correlation of accuracies across models.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import model_correlation_matrix
    >>> a = np.array([[1, 1, 1, 0, 1, 0], [1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 1, 1]])
    >>> model_correlation_matrix(a).round(2)
          2     0     1
    2  1.00 -0.32 -0.63
    0 -0.32  1.00  0.50
    1 -0.63  0.50  1.00
    """
    ids = responses.model_ids if isinstance(responses, ResponseMatrix) else None
    a = responses.require_binary("responses") if isinstance(responses, ResponseMatrix) else check_binary(responses,
                                                                                                         "responses",
                                                                                                         ndim=2)
    if a.shape[0] < 2:
        raise ValueError("responses: need at least 2 models")
    const = a.all(axis=1) | ~a.any(axis=1)
    if const.any():
        raise ValueError(f"responses: models {np.flatnonzero(const)[:5].tolist()} are constant; their correlation is "
                         "undefined")
    ids = pd.Index(np.arange(a.shape[0])) if ids is None else ids
    idx = np.argsort(-a.mean(axis=1), kind="stable") if sort_by_accuracy else np.arange(a.shape[0])
    c = np.corrcoef(a[idx].astype(np.float32))
    return pd.DataFrame(c, index=ids[idx], columns=ids[idx])
