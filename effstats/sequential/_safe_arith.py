"""Guarded arithmetic shared by the score statistics: division where the variance can be 0, the statistic at a look
whose estimate is exact, critical values checked for NaN, and the finite-population factor."""
from __future__ import annotations

from typing import Any

import numpy as np

_TIE = 1e-12  # |estimate - value| at most this (scale of the scores) is a tie at an exact look: rounding, not data


def _exact_z(d):
    """The test statistic where the estimate is exact (no sampling error): +inf / -inf by the sign of ``d``, 0
    within ``_TIE`` of 0.

    At a look that uses up a benchmark with the finite-population correction the estimate *is* the benchmark's
    score, so the decision is exact: reject iff the score differs from the value tested. The two differ by
    rounding alone when the value was computed from the same scores in another order (``null=scores.mean()``
    against sums accumulated batch by batch, e.g. -5.6e-17 on 500 items); taken as a real difference, that
    rounding would reject a true null whenever it falls on one side. A mean of ``n`` values in [-1, 1] is off by
    at most ~``n`` units in the last place (half that for the pairwise and blocked sums used here), below 1e-12
    to 4,500 items at the very worst and to millions in practice; a real difference of 1e-12 is a trillionth of
    a point.
    """
    d = np.asarray(d, float)
    return np.where(d > _TIE, np.inf, np.where(d < -_TIE, -np.inf, 0.0))



def _critical(c: Any) -> np.ndarray:
    """Critical values as floats; NaN cannot decide anything, so it is refused (``inf``: no boundary)."""
    c = np.asarray(c, float)
    if np.isnan(c).any():
        raise ValueError("c: expected critical values that are numbers (inf for no boundary), got NaN")
    return c


def _div(a, b, fill):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = a / b
    return np.where(b > 0, out, fill)


def _fpc(cnt, size):
    """Finite-population factor ``(N - n) / (N - 1)`` (0 once a dataset is used up)."""
    size = np.asarray(size, float)
    return np.clip(_div(size - cnt, size - 1, 0.0), 0.0, 1.0)
