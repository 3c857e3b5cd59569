"""What every score statistic of :mod:`effstats.sequential.statistics` shares: the arrays-of-one-shape base class
with its interval root search, the interval memo of online evaluators, and the tolerances of the tests."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._root_search import _boundary
from ._safe_arith import _critical


_EPS = 1e-12
_CC0 = 0.25  # continuity correction at delta0 = 0 of the paired test, in items (TangoStatistic.z_at says why)
# with the finite-population correction, fewer discordant items than this expected among the items left: the paired
# test's continuity correction is one whole item (TangoStatistic.z_at says why)
_FEW_LEFT = 2.0


class _Statistic:
    """Arrays of one shape (e.g. (n_runs, n_looks)); ``z_at(theta0)``, ``interval(c)`` and ``take(index)``."""

    _fields: tuple = ()
    estimate: np.ndarray
    se: np.ndarray
    # interval() is the root search below, whose cost is largely per call (about ten evaluations of z_at whatever
    # the number of cells): callers that will want intervals at several critical values ask for them in one call
    _per_call = True
    # cell -> interval ends, kept by the owner of statistics that repeat earlier looks (an online evaluator, whose
    # every update recomputes the looks so far): read by _interval_of; taken statistics share it
    _memo: dict | None = None

    def take(self, index: Any) -> "_Statistic":
        """The statistic at ``index`` of its arrays (e.g. each run's stopping look), as a statistic of the same type.

        Parameters
        ----------
        index : int, slice, array or tuple of arrays
            Any numpy index of the statistic's arrays.

        Returns
        -------
        statistic of the same type
            Its fields indexed by ``index``.

        See Also
        --------
        effstats.sequential.statistics.BinomialStatistic : A statistic with this method.

        Examples
        --------
        >>> from effstats.sequential.statistics import BinomialStatistic
        >>> st = BinomialStatistic([0.8, 0.9], 0.03, [100.0, 200.0])
        >>> float(st.take(1).estimate), float(st.take(1).n_eff)
        (0.9, 200.0)
        """
        new = object.__new__(type(self))
        shape = np.broadcast_shapes(*(np.shape(getattr(self, f)) for f in self._fields))
        for f in self._fields:
            setattr(new, f, np.broadcast_to(np.asarray(getattr(self, f)), shape)[index])
        if self._memo is not None:
            new._memo = self._memo
        return new

    def z_at(self, theta0: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _reach(self, c: np.ndarray) -> np.ndarray:
        """How far from the estimate the interval can reach (a bracket for the bisection)."""
        return np.full(np.shape(c), np.inf)

    def _kinks(self, side: int) -> np.ndarray | None:
        """Values where ``z_at`` has a kink, a jump or a flat side, shape ``(k,) + estimate.shape`` (None: none
        known), for the search below the estimate (``side=-1``) or above it (``+1``)."""
        return None

    def interval(self, c: Any, floor: Any = None, ceiling: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Values not rejected by the two one-sided score tests at critical value ``c``: ``(low, high)``; the low
        end is searched above ``floor`` and the high end below ``ceiling`` where these are given (arrays)."""
        c = np.broadcast_to(_critical(c), np.shape(self.estimate))
        lo_lim, hi_lim = self._limits
        est = np.clip(self.estimate, lo_lim + _EPS, hi_lim - _EPS)
        reach = self._reach(c)
        a_low = np.maximum(est - reach, lo_lim + _EPS)
        a_high = np.minimum(est + reach, hi_lim - _EPS)
        if floor is not None:
            a_low = np.maximum(a_low, floor)
        if ceiling is not None:
            a_high = np.minimum(a_high, ceiling)
        # low: the smallest theta with z(theta) <= c, high: the largest with -c <= z(theta); z decreases in theta.
        # Both ends are searched in one array (axis 0: low, high), so each step evaluates z once
        sign = np.array([1.0, -1.0]).reshape((2,) + (1,) * est.ndim)
        kinks = [self._kinks(-1), self._kinks(1)]
        points = None if kinks[0] is None else np.stack(kinks, axis=1)
        low, high = _boundary(lambda t: sign * self.z_at(t) - c, np.stack([a_low, a_high]), np.stack([est, est]),
                              points)
        return low, high

    _limits = (-1.0, 1.0)


def _interval_of(stat: Any, c: Any) -> tuple[np.ndarray, np.ndarray]:
    """``stat.interval(c)``; where the statistic carries a memo (``_memo``), each cell's ends are looked up there by
    the cell's fields and critical value (their bits) and only the cells not kept are computed, then kept.

    A cell's ends depend on its own fields and critical value alone (every statistic's interval is computed cell by
    cell, whatever the other cells of its arrays), so the ends looked up are those a computation gives.
    """
    memo = getattr(stat, "_memo", None)
    if memo is None:
        return stat.interval(c)
    shape = np.shape(stat.estimate)
    cols = [np.broadcast_to(np.asarray(getattr(stat, f), float), shape) for f in stat._fields]
    cols.append(np.broadcast_to(np.asarray(c, float), shape))
    rows = np.ascontiguousarray(np.stack([v.ravel() for v in cols], axis=1))
    keys = [(type(stat), r.tobytes()) for r in rows]
    todo = [k for k, key in enumerate(keys) if key not in memo]
    if todo:
        at = np.unravel_index(np.array(todo), shape) if shape else ()
        sub = stat.take(at)
        sub._memo = None
        lo, hi = (np.ravel(v) for v in sub.interval(np.asarray(cols[-1])[at]))
        for j, k in enumerate(todo):
            memo[keys[k]] = (lo[j], hi[j])
    ends = np.array([memo[key] for key in keys], float).reshape(shape + (2,))
    return ends[..., 0], ends[..., 1]
