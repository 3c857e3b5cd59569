"""Is a target model inside the range a subset estimator was fitted on?

A model-based subset estimator (a regression, an IRT model, anchor weights) learns from the source models how the
responses on a few items relate to the full-benchmark score; for a target unlike every source, typically a newer and
better model, it extrapolates, and its cross-validated interval (computed on the sources) no longer describes its
error (Zhang, Dorner & Hardt 2025). Two per-target checks on the selected items:

- **score**: the target's mean response on the selected items lies outside the range of the sources' means on the
  same items (above the best source or below the worst);
- **signature**: the target's distance to its nearest source (root mean squared difference of responses on the
  selected items) exceeds every source's distance to its nearest other source.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["RangeCheck", "range_check"]


@dataclass(frozen=True)
class RangeCheck:
    """Per-target result of :func:`range_check` (arrays of shape (n_target,) unless stated).

    Attributes
    ----------
    subset_score : numpy.ndarray
        The target's mean response on the selected items.
    source_range : tuple of float
        Lowest and highest mean response of a source model on the selected items.
    distance : numpy.ndarray
        Root mean squared difference between the target's responses and its nearest source's.
    distance_limit : float
        The largest such distance of a source model to its nearest other source.
    above, below, far : numpy.ndarray of bool
        Subset score above / below the sources' range; signature farther than ``distance_limit``.
    model_ids : array-like or None
        Target model ids, when known.
    """

    subset_score: np.ndarray
    source_range: tuple[float, float]
    distance: np.ndarray
    distance_limit: float
    above: np.ndarray
    below: np.ndarray
    far: np.ndarray
    model_ids: Any = None

    @property
    def out_of_range(self) -> np.ndarray:
        """True where any of the three checks flags the target."""
        return self.above | self.below | self.far

    def to_frame(self) -> pd.DataFrame:
        """One row per target: subset score, nearest-source distance, the three flags and ``out_of_range``."""
        return pd.DataFrame({"subset_score": self.subset_score, "distance": self.distance, "above": self.above,
                             "below": self.below, "far": self.far, "out_of_range": self.out_of_range},
                            index=self.model_ids)

    def names(self) -> list[str]:
        """The flagged targets, by id (or position), for messages."""
        pos = np.flatnonzero(self.out_of_range)
        ids = self.model_ids
        return [str(ids[i]) if ids is not None else str(i) for i in pos]


def _nan_rms(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Root mean squared difference over the items both rows answered, for every row of ``a`` against every row of
    ``b``: shape (len(a), len(b))."""
    oa, ob = ~np.isnan(a), ~np.isnan(b)
    a0, b0 = np.where(oa, a, 0.0), np.where(ob, b, 0.0)
    oaf, obf = oa.astype(float), ob.astype(float)
    n = oaf @ obf.T
    ss = (a0**2) @ obf.T + oaf @ (b0**2).T - 2 * a0 @ b0.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(np.maximum(ss, 0.0) / n)


def range_check(source: Any, target: Any, *, model_ids: Any = None) -> RangeCheck:
    """Flag targets outside the source models' range on the selected items.

    Parameters
    ----------
    source : array-like of shape (n_source, k)
        The source models' responses (correctness or graded scores) on the selected items; NaN where missing.
    target : array-like of shape (n_target, k)
        The targets' responses on the same items, in the same order; NaN where missing.
    model_ids : array-like of shape (n_target,), optional
        Target ids, used by :meth:`RangeCheck.names`.

    Returns
    -------
    RangeCheck

    See Also
    --------
    effstats.disco.AIPW : a design-unbiased estimate for targets out of range.

    References
    ----------
    .. [1] Zhang, G., Dorner, F. E., & Hardt, M. (2025). How Benchmark Prediction from Fewer Data Misses the
       Mark. arXiv:2506.07673.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats._range import range_check
    >>> rng = np.random.default_rng(0)
    >>> src = (rng.uniform(size=(30, 50)) < np.linspace(0.3, 0.7, 30)[:, None]).astype(float)
    >>> tgt = np.vstack([src[10], np.ones(50)])          # a typical model and one right on every item
    >>> r = range_check(src, tgt, model_ids=["typical", "perfect"])
    >>> r.out_of_range.tolist(), r.names()
    ([False, True], ['perfect'])
    """
    s = np.asarray(source, dtype=float)
    t = np.asarray(target, dtype=float)
    with np.errstate(invalid="ignore"):
        s_mean = np.nanmean(s, axis=1)
        t_mean = np.nanmean(t, axis=1)
    lo, hi = float(np.nanmin(s_mean)), float(np.nanmax(s_mean))
    d_ss = _nan_rms(s, s)
    np.fill_diagonal(d_ss, np.inf)
    limit = float(np.nanmax(np.nanmin(d_ss, axis=1))) if len(s) > 1 else np.inf
    d_ts = np.nanmin(_nan_rms(t, s), axis=1)
    eps = 1e-12
    return RangeCheck(t_mean, (lo, hi), d_ts, limit, t_mean > hi + eps, t_mean < lo - eps, d_ts > limit + eps,
                      None if model_ids is None else np.asarray(model_ids))


def score_range(values: np.ndarray) -> tuple[float, float]:
    """The lowest and highest of the rows' means of ``values`` (models × items, NaN where a cell is missing; a row
    without any value is left out): the source models' range of scores.

    Examples
    --------
    >>> score_range(np.array([[1.0, 0.0], [1.0, np.nan], [np.nan, np.nan]]))
    (0.5, 1.0)
    """
    scores = values.mean(axis=1)  # NaN in a row's mean only where the row has a NaN: then without its missing cells
    if np.isnan(scores).any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a model without any result
            scores = np.nanmean(values, axis=1)
    return float(np.nanmin(scores)), float(np.nanmax(scores))


def beyond_scores(est: Any, lo: float, hi: float, interval: Any = None) -> np.ndarray:
    """Whether each estimate lies beyond the source models' scores ``[lo, hi]``: by more than floating-point noise,
    or, for a design-based estimate with its reported interval ``interval`` (``(low, high)``, arrays like ``est``),
    by more than its sampling error explains: that interval clear of the range. A design-based estimate of a model as
    good as the best source lies above that source's score about half the time by sampling noise alone; a model-based
    one is pulled towards the sources, so any excess flags it. The interval is the one the result reports (its 95 %
    ``confidence_interval``), not ``est ± 1.96 se``: a sample all right has a standard error of 0 and the exact
    interval of its count, which may well reach the range.

    Examples
    --------
    >>> beyond_scores([0.86, 0.95, 0.5], 0.2, 0.81).tolist()
    [True, True, False]
    >>> beyond_scores([0.86, 0.95, 0.5], 0.2, 0.81, interval=([0.76, 0.85, 0.4], [0.96, 1.0, 0.6])).tolist()
    [False, True, False]
    """
    e = np.asarray(est, dtype=float)
    eps = 1e-12
    if interval is None:
        return (e < lo - eps) | (e > hi + eps)
    low, high = (np.broadcast_to(np.asarray(x, dtype=float), e.shape) for x in interval)
    # a missing limit (NaN) says nothing: the estimate alone decides
    low, high = np.where(np.isnan(low), e, low), np.where(np.isnan(high), e, high)
    return (high < lo - eps) | (low > hi + eps)
